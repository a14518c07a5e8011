-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "sessionKey" TEXT,
ADD COLUMN     "sessionId" TEXT;

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_sessionKey_id_idx" ON "Run"("tenantId", "jobId", "sessionKey", "id");
