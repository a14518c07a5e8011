-- DropForeignKey
ALTER TABLE "Trigger" DROP CONSTRAINT "Trigger_jobId_fkey";

-- DropForeignKey
ALTER TABLE "Invocation" DROP CONSTRAINT "Invocation_jobId_fkey";

-- DropForeignKey
ALTER TABLE "Run" DROP CONSTRAINT "Run_jobId_fkey";

-- DropForeignKey
ALTER TABLE "RunEvent" DROP CONSTRAINT "RunEvent_runId_fkey";

-- DropForeignKey
ALTER TABLE "WebhookActivity" DROP CONSTRAINT "WebhookActivity_sourceId_fkey";

-- DropForeignKey
ALTER TABLE "EventDelivery" DROP CONSTRAINT "EventDelivery_subscriptionId_fkey";

-- DropIndex
DROP INDEX "Job_tenantId_id_idx";

-- DropIndex
DROP INDEX "Trigger_jobId_idx";

-- DropIndex
DROP INDEX "Run_tenantId_id_idx";

-- DropIndex
DROP INDEX "Run_jobId_state_idx";

-- DropIndex
DROP INDEX "WebhookSource_tenantId_id_idx";

-- DropIndex
DROP INDEX "WebhookActivity_tenantId_id_idx";

-- DropIndex
DROP INDEX "VmhostConnection_tenantId_id_idx";

-- DropIndex
DROP INDEX "ExecutionTarget_tenantId_id_idx";

-- DropIndex
DROP INDEX "EventSubscription_tenantId_id_idx";

-- DropIndex
DROP INDEX "EventDelivery_subscriptionId_id_idx";

-- CreateIndex
CREATE UNIQUE INDEX "Job_tenantId_id_key" ON "Job"("tenantId", "id");

-- CreateIndex
CREATE INDEX "Trigger_tenantId_jobId_idx" ON "Trigger"("tenantId", "jobId");

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_state_idx" ON "Run"("tenantId", "jobId", "state");

-- CreateIndex
CREATE UNIQUE INDEX "Run_tenantId_id_key" ON "Run"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookSource_tenantId_id_key" ON "WebhookSource"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookActivity_tenantId_id_key" ON "WebhookActivity"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "VmhostConnection_tenantId_id_key" ON "VmhostConnection"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ExecutionTarget_tenantId_id_key" ON "ExecutionTarget"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "EventSubscription_tenantId_id_key" ON "EventSubscription"("tenantId", "id");

-- CreateIndex
CREATE INDEX "EventDelivery_tenantId_subscriptionId_id_idx" ON "EventDelivery"("tenantId", "subscriptionId", "id");

-- AddForeignKey
ALTER TABLE "Trigger" ADD CONSTRAINT "Trigger_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Invocation" ADD CONSTRAINT "Invocation_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_tenantId_runId_fkey" FOREIGN KEY ("tenantId", "runId") REFERENCES "Run"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookActivity" ADD CONSTRAINT "WebhookActivity_tenantId_sourceId_fkey" FOREIGN KEY ("tenantId", "sourceId") REFERENCES "WebhookSource"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EventDelivery" ADD CONSTRAINT "EventDelivery_tenantId_subscriptionId_fkey" FOREIGN KEY ("tenantId", "subscriptionId") REFERENCES "EventSubscription"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

