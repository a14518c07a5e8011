-- AlterTable
ALTER TABLE "OidcPayload" ADD COLUMN     "handle" TEXT,
ADD COLUMN     "lastUsedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "RateLimit" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL,
    "expire" TIMESTAMP(3),

    CONSTRAINT "RateLimit_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "RateLimit_expire_idx" ON "RateLimit"("expire");

-- CreateIndex
CREATE UNIQUE INDEX "OidcPayload_handle_key" ON "OidcPayload"("handle");

