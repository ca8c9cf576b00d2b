-- CreateTable
CREATE TABLE "crm_credential" (
    "crm" TEXT NOT NULL,
    "refresh_token" TEXT,
    "origin" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "crm_credential_pkey" PRIMARY KEY ("crm")
);
