-- DropIndex
DROP INDEX "Job_tenantId_id_idx";

-- DropIndex
DROP INDEX "WebhookSource_tenantId_id_idx";

-- DropIndex
DROP INDEX "VmhostConnection_tenantId_id_idx";

-- DropIndex
DROP INDEX "ExecutionTarget_tenantId_id_idx";

-- DropIndex
DROP INDEX "EventSubscription_tenantId_id_idx";

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Trigger" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "position" INTEGER NOT NULL,
    "config" JSONB NOT NULL,
    "sourceId" TEXT,
    "watchedJobId" TEXT,
    CONSTRAINT "Trigger_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Trigger" ("config", "enabled", "id", "jobId", "position", "sourceId", "tenantId", "type", "watchedJobId") SELECT "config", "enabled", "id", "jobId", "position", "sourceId", "tenantId", "type", "watchedJobId" FROM "Trigger";
DROP TABLE "Trigger";
ALTER TABLE "new_Trigger" RENAME TO "Trigger";
CREATE INDEX "Trigger_tenantId_jobId_idx" ON "Trigger"("tenantId", "jobId");
CREATE INDEX "Trigger_tenantId_sourceId_idx" ON "Trigger"("tenantId", "sourceId");
CREATE INDEX "Trigger_tenantId_watchedJobId_idx" ON "Trigger"("tenantId", "watchedJobId");
CREATE TABLE "new_Invocation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "idempotencyKey" TEXT,
    "requestHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    CONSTRAINT "Invocation_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Invocation" ("createdAt", "expiresAt", "id", "idempotencyKey", "jobId", "requestHash", "runId", "tenantId") SELECT "createdAt", "expiresAt", "id", "idempotencyKey", "jobId", "requestHash", "runId", "tenantId" FROM "Invocation";
DROP TABLE "Invocation";
ALTER TABLE "new_Invocation" RENAME TO "Invocation";
CREATE INDEX "Invocation_expiresAt_idx" ON "Invocation"("expiresAt");
CREATE UNIQUE INDEX "Invocation_tenantId_jobId_idempotencyKey_key" ON "Invocation"("tenantId", "jobId", "idempotencyKey");
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
    CONSTRAINT "Run_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Run_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Run" ("createdAt", "error", "finishedAt", "id", "inputs", "invocationId", "jobId", "name", "prompt", "result", "startedAt", "state", "tenantId", "triggerId", "triggerType", "updatedAt") SELECT "createdAt", "error", "finishedAt", "id", "inputs", "invocationId", "jobId", "name", "prompt", "result", "startedAt", "state", "tenantId", "triggerId", "triggerType", "updatedAt" FROM "Run";
DROP TABLE "Run";
ALTER TABLE "new_Run" RENAME TO "Run";
CREATE INDEX "Run_tenantId_jobId_state_idx" ON "Run"("tenantId", "jobId", "state");
CREATE UNIQUE INDEX "Run_tenantId_id_key" ON "Run"("tenantId", "id");
CREATE TABLE "new_RunEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    CONSTRAINT "RunEvent_tenantId_runId_fkey" FOREIGN KEY ("tenantId", "runId") REFERENCES "Run" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_RunEvent" ("at", "data", "id", "runId", "seq", "tenantId", "type") SELECT "at", "data", "id", "runId", "seq", "tenantId", "type" FROM "RunEvent";
DROP TABLE "RunEvent";
ALTER TABLE "new_RunEvent" RENAME TO "RunEvent";
CREATE UNIQUE INDEX "RunEvent_runId_seq_key" ON "RunEvent"("runId", "seq");
CREATE TABLE "new_WebhookActivity" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "deliveryId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "action" TEXT,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "context" JSONB NOT NULL,
    "decisions" JSONB NOT NULL,
    "runIds" JSONB NOT NULL,
    CONSTRAINT "WebhookActivity_tenantId_sourceId_fkey" FOREIGN KEY ("tenantId", "sourceId") REFERENCES "WebhookSource" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_WebhookActivity" ("action", "context", "decisions", "deliveryId", "event", "id", "receivedAt", "runIds", "sourceId", "tenantId") SELECT "action", "context", "decisions", "deliveryId", "event", "id", "receivedAt", "runIds", "sourceId", "tenantId" FROM "WebhookActivity";
DROP TABLE "WebhookActivity";
ALTER TABLE "new_WebhookActivity" RENAME TO "WebhookActivity";
CREATE INDEX "WebhookActivity_tenantId_receivedAt_idx" ON "WebhookActivity"("tenantId", "receivedAt");
CREATE UNIQUE INDEX "WebhookActivity_sourceId_deliveryId_key" ON "WebhookActivity"("sourceId", "deliveryId");
CREATE UNIQUE INDEX "WebhookActivity_tenantId_id_key" ON "WebhookActivity"("tenantId", "id");
CREATE TABLE "new_EventDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "eventType" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastStatusCode" INTEGER,
    "nextAttemptAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "EventDelivery_tenantId_subscriptionId_fkey" FOREIGN KEY ("tenantId", "subscriptionId") REFERENCES "EventSubscription" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_EventDelivery" ("attempts", "createdAt", "eventType", "id", "lastStatusCode", "nextAttemptAt", "payload", "state", "subscriptionId", "tenantId", "updatedAt", "webhookId") SELECT "attempts", "createdAt", "eventType", "id", "lastStatusCode", "nextAttemptAt", "payload", "state", "subscriptionId", "tenantId", "updatedAt", "webhookId" FROM "EventDelivery";
DROP TABLE "EventDelivery";
ALTER TABLE "new_EventDelivery" RENAME TO "EventDelivery";
CREATE INDEX "EventDelivery_tenantId_subscriptionId_id_idx" ON "EventDelivery"("tenantId", "subscriptionId", "id");
CREATE INDEX "EventDelivery_state_nextAttemptAt_idx" ON "EventDelivery"("state", "nextAttemptAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "Job_tenantId_id_key" ON "Job"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookSource_tenantId_id_key" ON "WebhookSource"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "VmhostConnection_tenantId_id_key" ON "VmhostConnection"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ExecutionTarget_tenantId_id_key" ON "ExecutionTarget"("tenantId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "EventSubscription_tenantId_id_key" ON "EventSubscription"("tenantId", "id");

