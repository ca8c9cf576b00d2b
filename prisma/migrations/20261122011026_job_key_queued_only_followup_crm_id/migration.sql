-- One queued job per key (no longer one queued-or-running): work that arrives while a call's job
-- runs is queued behind it instead of dropped, claims skip a key that has a running job.
-- Follow-up drafts remember the CRM record they were written to.
-- DropIndex
DROP INDEX "job_key_unfinished_key";

-- AlterTable
ALTER TABLE "call_followup" ADD COLUMN     "crm_id" TEXT,
ADD COLUMN     "written_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "job_key_queued_key" ON "job"("key") WHERE (state = 'queued'::text);
