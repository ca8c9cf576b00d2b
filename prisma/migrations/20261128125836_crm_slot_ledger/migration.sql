-- CreateTable
CREATE TABLE "crm_request" (
    "id" BIGSERIAL NOT NULL,
    "ledger" TEXT NOT NULL,
    "lane" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "done_at" TIMESTAMPTZ(3),

    CONSTRAINT "crm_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "crm_ledger" (
    "ledger" TEXT NOT NULL,
    "paused_until" TIMESTAMPTZ(3),
    "pause_reason" TEXT,
    "search_paused_until" TIMESTAMPTZ(3),
    "daily_limit" INTEGER,
    "daily_remaining" INTEGER,
    "report_from" TIMESTAMPTZ(3),
    "probe_since" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "crm_ledger_pkey" PRIMARY KEY ("ledger")
);

-- CreateIndex
CREATE INDEX "crm_request_ledger_started_at_idx" ON "crm_request"("ledger", "started_at");
