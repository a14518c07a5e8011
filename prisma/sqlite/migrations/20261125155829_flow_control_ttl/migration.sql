-- AlterTable
ALTER TABLE "Run" ADD COLUMN "expiresAt" DATETIME;

