-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "workspace" JSONB,
ADD COLUMN     "report" JSONB;

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "artifacts" JSONB;

-- CreateTable
CREATE TABLE "RunPatch" (
    "tenantId" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "patch" TEXT NOT NULL,

    CONSTRAINT "RunPatch_pkey" PRIMARY KEY ("tenantId","runId")
);

-- CreateTable
CREATE TABLE "GithubApp" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "appId" INTEGER NOT NULL,
    "apiBaseUrl" TEXT NOT NULL,
    "webBaseUrl" TEXT NOT NULL,
    "privateKeyCiphertext" TEXT NOT NULL,
    "webhookSecretCiphertext" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "lastVerifiedAt" TIMESTAMP(3),

    CONSTRAINT "GithubApp_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "GithubApp_tenantId_id_key" ON "GithubApp"("tenantId", "id");

-- AddForeignKey
ALTER TABLE "RunPatch" ADD CONSTRAINT "RunPatch_tenantId_runId_fkey" FOREIGN KEY ("tenantId", "runId") REFERENCES "Run"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GithubApp" ADD CONSTRAINT "GithubApp_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

