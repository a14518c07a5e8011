-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "sessionId" TEXT,
ADD COLUMN     "sessionKey" TEXT;

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_sessionKey_id_idx" ON "Run"("tenantId", "jobId", "sessionKey", "id");

