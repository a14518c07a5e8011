-- AlterTable
ALTER TABLE "OidcPayload" ADD COLUMN "handle" TEXT;
ALTER TABLE "OidcPayload" ADD COLUMN "lastUsedAt" DATETIME;

-- CreateTable
CREATE TABLE "RateLimit" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "points" INTEGER NOT NULL,
    "expire" DATETIME
);

-- CreateIndex
CREATE INDEX "RateLimit_expire_idx" ON "RateLimit"("expire");

-- CreateIndex
CREATE UNIQUE INDEX "OidcPayload_handle_key" ON "OidcPayload"("handle");

