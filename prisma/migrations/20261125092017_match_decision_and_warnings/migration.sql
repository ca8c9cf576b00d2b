-- Each call remembers why its CRM records were chosen (the match decision with its reasons) and
-- the problems that did not stop its sync (warnings).
-- AlterTable
ALTER TABLE "sync_status" ADD COLUMN     "match_decision" JSONB,
ADD COLUMN     "warnings" TEXT[] DEFAULT ARRAY[]::TEXT[];
