-- Records of owners that no longer exist could not satisfy the new foreign key, and open nothing anyway.
DELETE FROM "OidcPayload" WHERE "accountId" IS NOT NULL AND "accountId" NOT IN (SELECT "id" FROM "Owner");

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_OidcPayload" (
    "type" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "grantId" TEXT,
    "userCode" TEXT,
    "uid" TEXT,
    "accountId" TEXT,
    "tenantId" TEXT,
    "expiresAt" DATETIME,
    "consumedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "handle" TEXT,
    "lastUsedAt" DATETIME,

    PRIMARY KEY ("type", "id"),
    CONSTRAINT "OidcPayload_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Owner" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_OidcPayload" ("accountId", "consumedAt", "createdAt", "expiresAt", "grantId", "handle", "id", "lastUsedAt", "payload", "tenantId", "type", "uid", "userCode") SELECT "accountId", "consumedAt", "createdAt", "expiresAt", "grantId", "handle", "id", "lastUsedAt", "payload", "tenantId", "type", "uid", "userCode" FROM "OidcPayload";
DROP TABLE "OidcPayload";
ALTER TABLE "new_OidcPayload" RENAME TO "OidcPayload";
CREATE UNIQUE INDEX "OidcPayload_handle_key" ON "OidcPayload"("handle");
CREATE INDEX "OidcPayload_grantId_idx" ON "OidcPayload"("grantId");
CREATE INDEX "OidcPayload_userCode_idx" ON "OidcPayload"("userCode");
CREATE INDEX "OidcPayload_uid_idx" ON "OidcPayload"("uid");
CREATE INDEX "OidcPayload_tenantId_type_idx" ON "OidcPayload"("tenantId", "type");
CREATE INDEX "OidcPayload_expiresAt_idx" ON "OidcPayload"("expiresAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

