-- CreateTable
CREATE TABLE "encryption_keys" (
    "id" TEXT NOT NULL,
    "material" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "encryption_keys_pkey" PRIMARY KEY ("id")
);
