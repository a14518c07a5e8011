-- AlterTable
ALTER TABLE "Job" ADD COLUMN "env" JSONB;

-- CreateTable
CREATE TABLE "Secret" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "valueCiphertext" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Secret_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "Secret_tenantId_name_key" ON "Secret"("tenantId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "Secret_tenantId_id_key" ON "Secret"("tenantId", "id");

