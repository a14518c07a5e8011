-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Trigger" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "position" INTEGER NOT NULL,
    "config" JSONB NOT NULL,
    "sourceId" TEXT,
    "watchedJobId" TEXT,

    PRIMARY KEY ("tenantId", "jobId", "id"),
    CONSTRAINT "Trigger_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Trigger" ("config", "enabled", "id", "jobId", "position", "sourceId", "tenantId", "type", "watchedJobId") SELECT "config", "enabled", "id", "jobId", "position", "sourceId", "tenantId", "type", "watchedJobId" FROM "Trigger";
DROP TABLE "Trigger";
ALTER TABLE "new_Trigger" RENAME TO "Trigger";
CREATE INDEX "Trigger_tenantId_sourceId_idx" ON "Trigger"("tenantId", "sourceId");
CREATE INDEX "Trigger_tenantId_watchedJobId_idx" ON "Trigger"("tenantId", "watchedJobId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

