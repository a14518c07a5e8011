-- CreateTable
CREATE TABLE "Instance" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeatAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "Instance_heartbeatAt_idx" ON "Instance"("heartbeatAt");

