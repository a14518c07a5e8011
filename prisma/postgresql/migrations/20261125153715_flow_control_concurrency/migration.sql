-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "flowControl" JSONB;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "concurrencyKey" TEXT;

