-- CreateIndex
CREATE INDEX "Run_finishedAt_idx" ON "Run"("finishedAt");

