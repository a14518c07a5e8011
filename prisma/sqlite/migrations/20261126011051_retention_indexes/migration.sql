-- DropIndex
DROP INDEX "Run_finishedAt_idx";

-- CreateIndex
CREATE INDEX "Run_finishedAt_id_idx" ON "Run"("finishedAt", "id");

-- CreateIndex
CREATE INDEX "WebhookActivity_receivedAt_idx" ON "WebhookActivity"("receivedAt");

-- CreateIndex
CREATE INDEX "EventDelivery_createdAt_idx" ON "EventDelivery"("createdAt");

