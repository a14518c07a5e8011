-- CreateTable
CREATE TABLE "SenderConnection" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "apiBaseUrl" TEXT NOT NULL,
    "login" TEXT,
    "account" TEXT,
    "tokenCiphertext" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "lastVerifiedAt" TIMESTAMP(3),

    CONSTRAINT "SenderConnection_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "SenderConnection_tenantId_id_key" ON "SenderConnection"("tenantId", "id");

-- AddForeignKey
ALTER TABLE "SenderConnection" ADD CONSTRAINT "SenderConnection_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

