-- CreateTable
CREATE TABLE "WebhookRefusal" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL,
    "reason" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "headerNames" JSONB NOT NULL,
    "bodyBytes" INTEGER NOT NULL,
    "bodySha256" TEXT,
    "unrecordedBefore" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "WebhookRefusal_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WebhookRefusal_tenantId_sourceId_id_idx" ON "WebhookRefusal"("tenantId", "sourceId", "id");

-- CreateIndex
CREATE INDEX "WebhookRefusal_receivedAt_idx" ON "WebhookRefusal"("receivedAt");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookRefusal_tenantId_id_key" ON "WebhookRefusal"("tenantId", "id");

-- AddForeignKey
ALTER TABLE "WebhookRefusal" ADD CONSTRAINT "WebhookRefusal_tenantId_sourceId_fkey" FOREIGN KEY ("tenantId", "sourceId") REFERENCES "WebhookSource"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

