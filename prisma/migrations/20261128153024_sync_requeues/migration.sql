-- AlterTable
ALTER TABLE "sync_status" ADD COLUMN     "requeues" INTEGER NOT NULL DEFAULT 0;
