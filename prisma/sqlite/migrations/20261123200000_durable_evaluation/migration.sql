-- AlterTable
ALTER TABLE "Run" ADD COLUMN "startKey" TEXT;

-- AlterTable
ALTER TABLE "WebhookActivity" ADD COLUMN "evaluatedAt" DATETIME;

-- CreateIndex
CREATE UNIQUE INDEX "Run_tenantId_jobId_startKey_key" ON "Run"("tenantId", "jobId", "startKey");

-- CreateIndex
CREATE INDEX "WebhookActivity_evaluatedAt_idx" ON "WebhookActivity"("evaluatedAt");


-- Deliveries recorded before this column were evaluated when they arrived (or never will be)
UPDATE "WebhookActivity" SET "evaluatedAt" = "receivedAt";
