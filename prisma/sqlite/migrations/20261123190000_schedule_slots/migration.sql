-- CreateTable
CREATE TABLE "ScheduleSlot" (
    "tenantId" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "triggerId" TEXT NOT NULL,
    "slot" DATETIME NOT NULL,
    "state" TEXT NOT NULL,
    "runId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("tenantId", "jobId", "triggerId", "slot"),
    CONSTRAINT "ScheduleSlot_tenantId_jobId_fkey" FOREIGN KEY ("tenantId", "jobId") REFERENCES "Job" ("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE
);

