import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** Roles a person can take in the dev sign-in. Never `agent`: the inbox is for people, and agents never decide. */
export const DEV_ROLES = ['approver', 'admin', 'auditor'] as const;

const SUB = /^[A-Za-z0-9_.:@-]{1,128}$/;
const TENANT = /^[A-Za-z0-9_.:-]{1,128}$/;

export class DevTokenRequest {
  @IsString() @Matches(SUB, { message: 'must be 1 to 128 of letters, digits and _ . : @ -' }) sub: string;
  @IsOptional() @IsString() @MaxLength(256) name?: string;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(3) @IsIn(DEV_ROLES, { each: true }) roles: string[];
  @IsOptional() @IsString() @Matches(TENANT, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }) tenant?: string;
}
