-- AlterTable
ALTER TABLE "EventDelivery" ADD COLUMN     "lastError" TEXT;

