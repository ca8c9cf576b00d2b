-- CreateTable
CREATE TABLE "sync_status" (
    "call_id" TEXT NOT NULL,
    "crm" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error_code" TEXT,
    "last_error_message" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "context_pushed_at" TIMESTAMPTZ(3),
    "written_back_at" TIMESTAMPTZ(3),
    "crm_contact_id" TEXT,
    "crm_company_id" TEXT,
    "crm_deal_id" TEXT,
    "crm_activity_id" TEXT,
    "crm_followup_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "followups_requested_at" TIMESTAMPTZ(3),
    "call_created_at" TIMESTAMPTZ(3),
    "participant_email" TEXT,
    "participant_company" TEXT,
    "overall_score" INTEGER,
    "call_status" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sync_status_pkey" PRIMARY KEY ("call_id","crm")
);

-- CreateTable
CREATE TABLE "sync_event" (
    "id" BIGSERIAL NOT NULL,
    "call_id" TEXT NOT NULL,
    "crm" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "from_state" TEXT,
    "to_state" TEXT NOT NULL,
    "detail" TEXT,

    CONSTRAINT "sync_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "call_followup" (
    "call_id" TEXT NOT NULL,
    "draft_id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "to_addresses" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "draft_created_at" TIMESTAMPTZ(3),
    "raw" JSONB NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "call_followup_pkey" PRIMARY KEY ("call_id","draft_id")
);

-- CreateTable
CREATE TABLE "sync_cursor" (
    "name" TEXT NOT NULL,
    "cursor" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_call_created_at" TIMESTAMPTZ(3),

    CONSTRAINT "sync_cursor_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "webhook_inbox" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT,
    "type" TEXT,
    "call_id" TEXT,
    "raw_body" TEXT NOT NULL,
    "signature_ok" BOOLEAN NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "processed_at" TIMESTAMPTZ(3),
    "outcome" TEXT NOT NULL,
    "reject_reason" TEXT,

    CONSTRAINT "webhook_inbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "priority" INTEGER NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 8,
    "run_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_by" TEXT,
    "locked_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "budget_ledger" (
    "ledger" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "budget_ledger_pkey" PRIMARY KEY ("ledger","day")
);

-- CreateTable
CREATE TABLE "budget_request" (
    "id" BIGSERIAL NOT NULL,
    "ledger" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "priority" TEXT NOT NULL,

    CONSTRAINT "budget_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "budget_pause" (
    "ledger" TEXT NOT NULL,
    "paused_until" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT NOT NULL DEFAULT 'rate',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "budget_pause_pkey" PRIMARY KEY ("ledger")
);

-- CreateTable
CREATE TABLE "leader_lease" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "leader_lease_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "sync_status_state_next_attempt_at_idx" ON "sync_status"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "sync_status_call_created_at_idx" ON "sync_status"("call_created_at");

-- CreateIndex
CREATE INDEX "sync_status_updated_at_idx" ON "sync_status"("updated_at");

-- CreateIndex
CREATE INDEX "sync_status_participant_email_idx" ON "sync_status"("participant_email");

-- CreateIndex
CREATE INDEX "sync_event_call_id_crm_at_idx" ON "sync_event"("call_id", "crm", "at");

-- CreateIndex
CREATE INDEX "webhook_inbox_outcome_received_at_idx" ON "webhook_inbox"("outcome", "received_at");

-- CreateIndex
CREATE INDEX "webhook_inbox_received_at_idx" ON "webhook_inbox"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_inbox_event_id_key" ON "webhook_inbox"("event_id") WHERE (outcome = ANY (ARRAY['accepted'::text, 'processed'::text, 'failed'::text]));

-- CreateIndex
CREATE INDEX "job_claim_idx" ON "job"("state", "priority" DESC, "run_at");

-- CreateIndex
CREATE INDEX "job_lease_idx" ON "job"("state", "locked_until");

-- CreateIndex
CREATE INDEX "job_state_updated_at_idx" ON "job"("state", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "job_key_unfinished_key" ON "job"("key") WHERE (state = ANY (ARRAY['queued'::text, 'running'::text]));

-- CreateIndex
CREATE INDEX "budget_request_ledger_started_at_idx" ON "budget_request"("ledger", "started_at");
