-- CreateTable
CREATE TABLE "SenderConnection" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "apiBaseUrl" TEXT NOT NULL,
    "login" TEXT,
    "account" TEXT,
    "tokenCiphertext" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "lastVerifiedAt" DATETIME,
    CONSTRAINT "SenderConnection_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "SenderConnection_tenantId_id_key" ON "SenderConnection"("tenantId", "id");

