-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "business_type" TEXT,
ADD COLUMN     "country" TEXT,
ADD COLUMN     "default_currency" TEXT,
ADD COLUMN     "details" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "email" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "type" TEXT;
