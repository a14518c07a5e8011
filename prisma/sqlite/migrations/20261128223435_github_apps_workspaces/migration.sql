-- AlterTable
ALTER TABLE "Job" ADD COLUMN "workspace" JSONB;
ALTER TABLE "Job" ADD COLUMN "report" JSONB;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN "artifacts" JSONB;

-- CreateTable
CREATE TABLE "RunPatch" (
    "tenantId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "patch" TEXT NOT NULL,

    PRIMARY KEY ("tenantId", "runId"),
    CONSTRAINT "RunPatch_tenantId_runId_fkey" FOREIGN KEY ("tenantId", "runId") REFERENCES "Run" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "GithubApp" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "appId" INTEGER NOT NULL,
    "apiBaseUrl" TEXT NOT NULL,
    "webBaseUrl" TEXT NOT NULL,
    "privateKeyCiphertext" TEXT NOT NULL,
    "webhookSecretCiphertext" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "lastVerifiedAt" DATETIME,
    CONSTRAINT "GithubApp_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "GithubApp_tenantId_id_key" ON "GithubApp"("tenantId", "id");

