-- AlterTable
ALTER TABLE "Instance" ADD COLUMN "url" TEXT;

