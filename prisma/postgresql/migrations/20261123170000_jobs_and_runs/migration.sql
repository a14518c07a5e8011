-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "deletedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "executorRef" TEXT,
ADD COLUMN     "replayOf" TEXT,
ADD COLUMN     "traceLength" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "Run_state_idx" ON "Run"("state");

