-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "expiresAt" TIMESTAMP(3);

