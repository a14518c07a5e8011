-- AlterTable
ALTER TABLE "WebhookSource" ADD COLUMN     "deletedAt" TIMESTAMP(3);

