-- AlterTable
ALTER TABLE "WebhookSource" ADD COLUMN "deletedAt" DATETIME;

