-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "debounceKey" TEXT;

