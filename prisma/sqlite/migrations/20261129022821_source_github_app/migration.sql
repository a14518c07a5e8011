-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookSource" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "signatureHeader" TEXT,
    "secretCiphertext" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "deletedAt" DATETIME,
    "githubAppId" TEXT,
    CONSTRAINT "WebhookSource_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "WebhookSource_tenantId_githubAppId_fkey" FOREIGN KEY ("tenantId", "githubAppId") REFERENCES "GithubApp" ("tenantId", "id") ON DELETE NO ACTION ON UPDATE CASCADE
);
INSERT INTO "new_WebhookSource" ("createdAt", "deletedAt", "format", "id", "name", "secretCiphertext", "signatureHeader", "tenantId", "updatedAt") SELECT "createdAt", "deletedAt", "format", "id", "name", "secretCiphertext", "signatureHeader", "tenantId", "updatedAt" FROM "WebhookSource";
DROP TABLE "WebhookSource";
ALTER TABLE "new_WebhookSource" RENAME TO "WebhookSource";
CREATE UNIQUE INDEX "WebhookSource_tenantId_id_key" ON "WebhookSource"("tenantId", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

