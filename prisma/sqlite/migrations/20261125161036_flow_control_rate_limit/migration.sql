-- AlterTable
ALTER TABLE "Run" ADD COLUMN "rateKey" TEXT;

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_rateKey_createdAt_idx" ON "Run"("tenantId", "jobId", "rateKey", "createdAt");

