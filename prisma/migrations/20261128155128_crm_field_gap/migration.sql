-- CreateTable
CREATE TABLE "crm_field_gap" (
    "crm" TEXT NOT NULL,
    "object" TEXT NOT NULL,
    "field" TEXT NOT NULL,
    "detected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "checked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "crm_field_gap_pkey" PRIMARY KEY ("crm","object","field")
);
