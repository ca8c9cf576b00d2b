-- Deal-level signals (issue 13): each deal's synced calls (deal_call), and per deal the newest
-- call seen and the ledger of what was last written to the CRM (deal_signal).
-- CreateTable
CREATE TABLE "deal_call" (
    "crm" TEXT NOT NULL,
    "call_id" TEXT NOT NULL,
    "deal_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "overall_score" DOUBLE PRECISION,
    "objections_detected" INTEGER,
    "objections_handled" INTEGER,
    "next_steps" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deal_call_pkey" PRIMARY KEY ("crm","call_id")
);

-- CreateTable
CREATE TABLE "deal_signal" (
    "crm" TEXT NOT NULL,
    "deal_id" TEXT NOT NULL,
    "newest_call_id" TEXT NOT NULL,
    "newest_started_at" TIMESTAMPTZ(3) NOT NULL,
    "written_call_id" TEXT,
    "written_values" JSONB,
    "written_at" TIMESTAMPTZ(3),
    "claimed_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "deal_signal_pkey" PRIMARY KEY ("crm","deal_id")
);

-- CreateIndex
CREATE INDEX "deal_call_crm_deal_id_started_at_idx" ON "deal_call"("crm", "deal_id", "started_at");
