-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "monthlyBudgetUsd" REAL;

