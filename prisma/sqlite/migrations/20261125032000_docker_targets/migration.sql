-- AlterTable
ALTER TABLE "ExecutionTarget" ADD COLUMN "command" TEXT;
ALTER TABLE "ExecutionTarget" ADD COLUMN "cpus" REAL;
ALTER TABLE "ExecutionTarget" ADD COLUMN "memoryMb" INTEGER;
ALTER TABLE "ExecutionTarget" ADD COLUMN "network" TEXT;
ALTER TABLE "ExecutionTarget" ADD COLUMN "pids" INTEGER;

