-- DropIndex
DROP INDEX "Trigger_tenantId_jobId_idx";

-- AlterTable
ALTER TABLE "Trigger" DROP CONSTRAINT "Trigger_pkey",
ADD CONSTRAINT "Trigger_pkey" PRIMARY KEY ("tenantId", "jobId", "id");

