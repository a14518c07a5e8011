-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN     "monthlyBudgetUsd" DOUBLE PRECISION;

