-- AlterTable
ALTER TABLE "Job" ADD COLUMN "agent" JSONB;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN "usage" JSONB;

