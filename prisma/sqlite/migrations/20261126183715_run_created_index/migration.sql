-- CreateIndex
CREATE INDEX "Run_tenantId_createdAt_idx" ON "Run"("tenantId", "createdAt");

