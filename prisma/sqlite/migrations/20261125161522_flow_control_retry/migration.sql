-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Run" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "invocationId" TEXT,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "triggerType" TEXT NOT NULL,
    "triggerId" TEXT,
    "prompt" TEXT NOT NULL,
    "inputs" JSONB NOT NULL,
    "result" JSONB,
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "startedAt" DATETIME,
    "finishedAt" DATETIME,
    "replayOf" TEXT,
    "concurrencyKey" TEXT,
    "expiresAt" DATETIME,
    "rateKey" TEXT,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "notBefore" DATETIME,
    "traceLength" INTEGER NOT NULL DEFAULT 0,
    "executorRef" TEXT,
    "startKey" TEXT,
    "claim" TEXT,
    "ownerId" TEXT,
    CONSTRAINT "Run_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Run_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Run" ("claim", "concurrencyKey", "createdAt", "error", "executorRef", "expiresAt", "finishedAt", "id", "inputs", "invocationId", "jobId", "name", "ownerId", "prompt", "rateKey", "replayOf", "result", "startKey", "startedAt", "state", "tenantId", "traceLength", "triggerId", "triggerType", "updatedAt") SELECT "claim", "concurrencyKey", "createdAt", "error", "executorRef", "expiresAt", "finishedAt", "id", "inputs", "invocationId", "jobId", "name", "ownerId", "prompt", "rateKey", "replayOf", "result", "startKey", "startedAt", "state", "tenantId", "traceLength", "triggerId", "triggerType", "updatedAt" FROM "Run";
DROP TABLE "Run";
ALTER TABLE "new_Run" RENAME TO "Run";
CREATE INDEX "Run_tenantId_jobId_state_idx" ON "Run"("tenantId", "jobId", "state");
CREATE INDEX "Run_tenantId_jobId_rateKey_createdAt_idx" ON "Run"("tenantId", "jobId", "rateKey", "createdAt");
CREATE INDEX "Run_state_idx" ON "Run"("state");
CREATE UNIQUE INDEX "Run_tenantId_id_key" ON "Run"("tenantId", "id");
CREATE UNIQUE INDEX "Run_tenantId_jobId_startKey_key" ON "Run"("tenantId", "jobId", "startKey");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

