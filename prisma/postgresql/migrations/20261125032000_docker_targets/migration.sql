-- AlterTable
ALTER TABLE "ExecutionTarget" ADD COLUMN     "command" TEXT,
ADD COLUMN     "cpus" DOUBLE PRECISION,
ADD COLUMN     "memoryMb" INTEGER,
ADD COLUMN     "network" TEXT,
ADD COLUMN     "pids" INTEGER;

