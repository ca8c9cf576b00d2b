-- AlterTable
ALTER TABLE "sync_status" ADD COLUMN     "followups_settled_at" TIMESTAMPTZ(3);

-- Claims made before this column existed keep their old meaning (settled): nothing tells a
-- finished request from one cut short there, and a warning on every old call would be noise.
UPDATE "sync_status" SET "followups_settled_at" = "followups_requested_at"
WHERE "followups_requested_at" IS NOT NULL;
