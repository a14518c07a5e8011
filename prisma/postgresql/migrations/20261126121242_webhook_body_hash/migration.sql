-- AlterTable
ALTER TABLE "WebhookActivity" ADD COLUMN     "bodyHash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "WebhookActivity_sourceId_bodyHash_key" ON "WebhookActivity"("sourceId", "bodyHash");

