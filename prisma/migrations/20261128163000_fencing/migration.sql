-- Fencing (issue 22, defect 2): each job claim gets a lease epoch, and a follow-up claim records
-- the run (job, epoch) that holds it.
-- AlterTable
ALTER TABLE "job" ADD COLUMN     "epoch" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "sync_status" ADD COLUMN     "followups_claim_epoch" BIGINT,
ADD COLUMN     "followups_claim_job" BIGINT;
