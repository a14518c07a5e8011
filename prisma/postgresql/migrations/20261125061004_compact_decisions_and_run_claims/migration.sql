-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "claim" TEXT,
ADD COLUMN     "ownerId" TEXT;

-- AlterTable
ALTER TABLE "WebhookActivity" ADD COLUMN     "missCount" INTEGER NOT NULL DEFAULT 0;

