-- AlterTable
ALTER TABLE "Job" ADD COLUMN "network" JSONB;

