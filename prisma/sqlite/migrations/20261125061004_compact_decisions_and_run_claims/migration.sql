-- AlterTable
ALTER TABLE "Run" ADD COLUMN "claim" TEXT;
ALTER TABLE "Run" ADD COLUMN "ownerId" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
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
    "evaluatedAt" DATETIME,
    "missCount" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "WebhookActivity_tenantId_sourceId_fkey" FOREIGN KEY ("tenantId", "sourceId") REFERENCES "WebhookSource" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_WebhookActivity" ("action", "context", "decisions", "deliveryId", "evaluatedAt", "event", "id", "receivedAt", "runIds", "sourceId", "tenantId") SELECT "action", "context", "decisions", "deliveryId", "evaluatedAt", "event", "id", "receivedAt", "runIds", "sourceId", "tenantId" FROM "WebhookActivity";
DROP TABLE "WebhookActivity";
ALTER TABLE "new_WebhookActivity" RENAME TO "WebhookActivity";
CREATE INDEX "WebhookActivity_tenantId_receivedAt_idx" ON "WebhookActivity"("tenantId", "receivedAt");
CREATE INDEX "WebhookActivity_evaluatedAt_idx" ON "WebhookActivity"("evaluatedAt");
CREATE UNIQUE INDEX "WebhookActivity_sourceId_deliveryId_key" ON "WebhookActivity"("sourceId", "deliveryId");
CREATE UNIQUE INDEX "WebhookActivity_tenantId_id_key" ON "WebhookActivity"("tenantId", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

