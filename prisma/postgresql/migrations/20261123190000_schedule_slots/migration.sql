-- CreateTable
CREATE TABLE "ScheduleSlot" (
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "triggerId" TEXT NOT NULL,
    "slot" TIMESTAMP(3) NOT NULL,
    "state" TEXT NOT NULL,
    "runId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ScheduleSlot_pkey" PRIMARY KEY ("tenantId","jobId","triggerId","slot")
);

-- AddForeignKey
ALTER TABLE "ScheduleSlot" ADD CONSTRAINT "ScheduleSlot_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

