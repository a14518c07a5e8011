-- DropIndex
DROP INDEX "Run_tenantId_jobId_state_idx";

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_state_id_idx" ON "Run"("tenantId", "jobId", "state", "id");

-- CreateIndex
CREATE INDEX "Run_tenantId_jobId_id_idx" ON "Run"("tenantId", "jobId", "id");

-- CreateIndex
CREATE INDEX "Run_tenantId_state_id_idx" ON "Run"("tenantId", "state", "id");

